WITH t AS (
  SELECT
    site,
    CAST(DATE_TRUNC('MONTH', commission_date) AS DATE) AS window_start,
    device AS device,
    CAST(SUM(publisher_net_revenue) AS DECIMAL(38, 4)) AS revenue,
    CAST(SUM(order_value) AS DECIMAL(38, 4)) AS order_value,
    COUNT(*) AS transactions,
    COUNT(*) FILTER(WHERE
      returned) AS returns,
    COUNT(*) FILTER(WHERE
      returned) / COUNT(*) AS return_rate
  FROM transactions
  WHERE
    NOT commission_date IS NULL
  GROUP BY ALL
), a AS (
  SELECT
    site,
    window_start,
    CASE device_type
      WHEN 'DSK'
      THEN 'Desktop'
      WHEN 'MBL'
      THEN 'Mobile'
      WHEN 'TBL'
      THEN 'Tablet'
      WHEN 'UKN'
      THEN 'Unknown'
    END AS device,
    CAST(BROUND(SUM(clicks), 0) AS BIGINT) AS clicks,
    CAST(SUM(revenue) AS DECIMAL(38, 4)) AS aggregate_revenue,
    CAST(SUM(sales) AS DECIMAL(38, 4)) AS sales,
    CAST(BROUND(SUM(actions), 0) AS BIGINT) AS actions,
    MIN(fetched_at) AS report_fetched_at
  FROM networks
  WHERE
    grain = 'month'
    AND campaign_ids IS NULL
    AND merchant_group_ids IS NULL
    AND program_type IS NULL
    AND partner_product IS NULL
    AND NOT device_type IS NULL
    AND country IS NULL
    AND sub_ids IS NULL
    AND cuids IS NULL
    AND page_utm_source IS NULL
    AND page_utm_medium IS NULL
    AND page_utm_campaign IS NULL
    AND page_utm_term IS NULL
    AND page_utm_content IS NULL
    AND link_utm_source IS NULL
    AND link_utm_medium IS NULL
    AND link_utm_campaign IS NULL
    AND link_utm_term IS NULL
    AND link_utm_content IS NULL
  GROUP BY ALL
)
SELECT
  v.*,
  COALESCE(
    (
      (
        CASE v.site
          WHEN 'alpha'
          THEN (
            v.window_start >= CAST('2026-01-01' AS DATE)
            AND v.window_end <= CAST('2026-03-11' AS DATE)
          )
          ELSE FALSE
        END
      )
      AND (
        v.report_fetched_at IS NULL
        OR (
          UNIX_TIMESTAMP(v.report_fetched_at) >= (
            DATEDIFF(DAY, CAST('1970-01-01' AS DATE), v.window_end) + 2
          ) * 86400
        )
      )
    ),
    FALSE
  ) AS complete,
  COALESCE(
    (
      (
        CASE v.site
          WHEN 'alpha'
          THEN (
            v.window_start >= CAST('2026-01-01' AS DATE)
            AND v.window_end <= CAST('2026-01-25' AS DATE)
          )
          ELSE FALSE
        END
      )
      AND (
        v.report_fetched_at IS NULL
        OR (
          UNIX_TIMESTAMP(v.report_fetched_at) >= (
            DATEDIFF(DAY, CAST('1970-01-01' AS DATE), v.window_end) + (
              CASE v.site WHEN 'alpha' THEN 45 ELSE 45 END
            )
          ) * 86400
        )
      )
    ),
    FALSE
  ) AS final
FROM (
  SELECT
    site,
    window_start,
    CAST((
      window_start + INTERVAL '1' MONTH
    ) AS DATE) AS window_end,
    device,
    COALESCE(revenue, 0) AS revenue,
    COALESCE(order_value, 0) AS order_value,
    COALESCE(transactions, 0) AS transactions,
    COALESCE(returns, 0) AS returns,
    return_rate,
    clicks,
    aggregate_revenue,
    sales,
    actions,
    CAST(CAST(CASE
      WHEN CAST(ROUND(aggregate_revenue * 10000, 0) AS BIGINT) < 0
      THEN -(
        (
          2 * -CAST(ROUND(aggregate_revenue * 10000, 0) AS BIGINT) + NULLIF(clicks, 0)
        ) DIV (
          2 * NULLIF(clicks, 0)
        )
      )
      ELSE (
        2 * CAST(ROUND(aggregate_revenue * 10000, 0) AS BIGINT) + NULLIF(clicks, 0)
      ) DIV (
        2 * NULLIF(clicks, 0)
      )
    END AS DECIMAL(18, 0)) * 0.0001 AS DECIMAL(18, 4)) AS epc,
    actions / NULLIF(clicks, 0) AS conversion_rate,
    report_fetched_at
  FROM t
  FULL JOIN a
    USING (site, window_start, device)
) AS v
