SELECT v.*, coalesce(((CASE v.site WHEN 'alpha' THEN (v.window_start >= DATE '2026-01-01' AND v.window_end <= DATE '2026-03-11') ELSE false END) AND (v.report_fetched_at IS NULL OR (epoch(v.report_fetched_at) >= (date_diff('day', DATE '1970-01-01', v.window_end) + 2) * 86400))), false) AS complete, coalesce(((CASE v.site WHEN 'alpha' THEN (v.window_start >= DATE '2026-01-01' AND v.window_end <= DATE '2026-01-25') ELSE false END) AND (v.report_fetched_at IS NULL OR (epoch(v.report_fetched_at) >= (date_diff('day', DATE '1970-01-01', v.window_end) + (CASE v.site WHEN 'alpha' THEN 45 ELSE 45 END)) * 86400))), false) AS final FROM (WITH by_transaction AS (  -- a transaction's items of a product: counting these needs no DISTINCT
    SELECT site, date_trunc('month', commission_date)::DATE AS window_start, product_name,
           merchant_group_id, commission_id, min(merchant_group_name) AS merchant_group_name,
           CAST(sum(revenue) AS DECIMAL(38, 4)) AS revenue, CAST(sum(order_value) AS DECIMAL(38, 4)) AS order_value, sum(quantity) AS quantity,
           bool_or(returned) AS returned
    FROM live.transaction_items
    WHERE commission_date IS NOT NULL
    GROUP BY ALL
), t AS (
    SELECT site, window_start, product_name, merchant_group_id,
           min(merchant_group_name) AS merchant_group_name, CAST(sum(revenue) AS DECIMAL(38, 4)) AS revenue,
           CAST(sum(order_value) AS DECIMAL(38, 4)) AS order_value, sum(quantity) AS quantity, count(*) AS transactions,
           count(*) FILTER (WHERE returned) AS returns
    FROM by_transaction
    GROUP BY ALL
), a AS (
    SELECT site, window_start, product_name, merchant_group_id,
           min(merchant_group_name) AS merchant_group_name, CAST(sum(revenue) AS DECIMAL(38, 4)) AS aggregate_revenue,
           CAST(sum(sales) AS DECIMAL(38, 4)) AS sales, sum(actions)::BIGINT AS actions, min(fetched_at) AS report_fetched_at
    FROM live.merchandise
    WHERE grain = 'month' AND campaign_ids IS NULL AND merchant_group_ids IS NULL AND program_type IS NULL AND partner_product IS NULL AND device_type IS NULL AND country IS NULL AND sub_ids IS NULL AND cuids IS NULL AND page_utm_source IS NULL AND page_utm_medium IS NULL AND page_utm_campaign IS NULL AND page_utm_term IS NULL AND page_utm_content IS NULL AND link_utm_source IS NULL AND link_utm_medium IS NULL AND link_utm_campaign IS NULL AND link_utm_term IS NULL AND link_utm_content IS NULL
    GROUP BY ALL
)
SELECT site, window_start, (window_start + INTERVAL 1 MONTH)::DATE AS window_end, product_name,
       merchant_group_id, coalesce(t.merchant_group_name, a.merchant_group_name) AS merchant_group_name,
       coalesce(revenue, 0) AS revenue, coalesce(order_value, 0) AS order_value,
       coalesce(quantity, 0) AS quantity, coalesce(transactions, 0) AS transactions,
       coalesce(returns, 0) AS returns, aggregate_revenue, sales, actions, report_fetched_at
FROM t FULL JOIN a USING (site, window_start, product_name, merchant_group_id)) AS v
