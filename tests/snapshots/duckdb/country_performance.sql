SELECT v.*, coalesce(((CASE v.site WHEN 'alpha' THEN (v.window_start >= DATE '2026-01-01' AND v.window_end <= DATE '2026-03-11') ELSE false END) AND (v.report_fetched_at IS NULL OR (epoch(v.report_fetched_at) >= (date_diff('day', DATE '1970-01-01', v.window_end) + 2) * 86400))), false) AS complete, coalesce(((CASE v.site WHEN 'alpha' THEN (v.window_start >= DATE '2026-01-01' AND v.window_end <= DATE '2026-01-25') ELSE false END) AND (v.report_fetched_at IS NULL OR (epoch(v.report_fetched_at) >= (date_diff('day', DATE '1970-01-01', v.window_end) + (CASE v.site WHEN 'alpha' THEN 45 ELSE 45 END)) * 86400))), false) AS final FROM (
WITH t AS (
    SELECT site, date_trunc('month', commission_date)::DATE AS window_start, upper(country) AS country,
    CAST(sum(publisher_net_revenue) AS DECIMAL(38, 4)) AS revenue,
    CAST(sum(order_value) AS DECIMAL(38, 4)) AS order_value,
    count(*) AS transactions,
    count(*) FILTER (WHERE returned) AS returns,
    count(*) FILTER (WHERE returned) / count(*) AS return_rate
    FROM live.transactions
    WHERE commission_date IS NOT NULL
    GROUP BY ALL
), a AS (
    SELECT site, window_start, country AS country, sum(clicks)::BIGINT AS clicks,
           CAST(sum(revenue) AS DECIMAL(38, 4)) AS aggregate_revenue, CAST(sum(sales) AS DECIMAL(38, 4)) AS sales, sum(actions)::BIGINT AS actions,
           min(fetched_at) AS report_fetched_at
    FROM live.networks
    WHERE grain = 'month' AND campaign_ids IS NULL AND merchant_group_ids IS NULL AND program_type IS NULL AND partner_product IS NULL AND device_type IS NULL AND country IS NOT NULL AND sub_ids IS NULL AND cuids IS NULL AND page_utm_source IS NULL AND page_utm_medium IS NULL AND page_utm_campaign IS NULL AND page_utm_term IS NULL AND page_utm_content IS NULL AND link_utm_source IS NULL AND link_utm_medium IS NULL AND link_utm_campaign IS NULL AND link_utm_term IS NULL AND link_utm_content IS NULL
    GROUP BY ALL
)
SELECT site, window_start, (window_start + INTERVAL 1 MONTH)::DATE AS window_end, country,
       coalesce(revenue, 0) AS revenue, coalesce(order_value, 0) AS order_value,
       coalesce(transactions, 0) AS transactions, coalesce(returns, 0) AS returns, return_rate,
       clicks, aggregate_revenue, sales, actions,
       CAST(CAST(CASE WHEN CAST(aggregate_revenue * 10000 AS BIGINT) < 0 THEN -((2 * -CAST(aggregate_revenue * 10000 AS BIGINT) + nullif(clicks, 0)) // (2 * nullif(clicks, 0))) ELSE (2 * CAST(aggregate_revenue * 10000 AS BIGINT) + nullif(clicks, 0)) // (2 * nullif(clicks, 0)) END AS DECIMAL(18, 0)) * 0.0001 AS DECIMAL(18,4)) AS epc, actions / nullif(clicks, 0) AS conversion_rate,
       report_fetched_at
FROM t FULL JOIN a USING (site, window_start, country)) AS v
