WITH by_transaction AS (
  SELECT
    site,
    CAST(DATE_TRUNC('MONTH', commission_date) AS DATE) AS window_start,
    product_name,
    merchant_group_id,
    commission_id,
    MIN(merchant_group_name) AS merchant_group_name,
    CAST(SUM(revenue) AS DECIMAL(38, 4)) AS revenue,
    CAST(SUM(order_value) AS DECIMAL(38, 4)) AS order_value,
    SUM(quantity) AS quantity,
    BOOL_OR(returned) AS returned
  FROM transaction_items
  WHERE
    NOT commission_date IS NULL
  GROUP BY ALL
), t AS (
  SELECT
    site,
    window_start,
    product_name,
    merchant_group_id,
    MIN(merchant_group_name) AS merchant_group_name,
    CAST(SUM(revenue) AS DECIMAL(38, 4)) AS revenue,
    CAST(SUM(order_value) AS DECIMAL(38, 4)) AS order_value,
    SUM(quantity) AS quantity,
    COUNT(*) AS transactions,
    COUNT(*) FILTER(WHERE
      returned) AS returns
  FROM by_transaction
  GROUP BY ALL
), a AS (
  SELECT
    site,
    window_start,
    product_name,
    merchant_group_id,
    MIN(merchant_group_name) AS merchant_group_name,
    CAST(SUM(revenue) AS DECIMAL(38, 4)) AS aggregate_revenue,
    CAST(SUM(sales) AS DECIMAL(38, 4)) AS sales,
    CAST(BROUND(SUM(actions), 0) AS BIGINT) AS actions,
    MIN(fetched_at) AS report_fetched_at
  FROM merchandise
  WHERE
    grain = 'month'
    AND campaign_ids IS NULL
    AND merchant_group_ids IS NULL
    AND program_type IS NULL
    AND partner_product IS NULL
    AND device_type IS NULL
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
    product_name,
    merchant_group_id,
    COALESCE(t.merchant_group_name, a.merchant_group_name) AS merchant_group_name,
    COALESCE(revenue, 0) AS revenue,
    COALESCE(order_value, 0) AS order_value,
    COALESCE(quantity, 0) AS quantity,
    COALESCE(transactions, 0) AS transactions,
    COALESCE(returns, 0) AS returns,
    aggregate_revenue,
    sales,
    actions,
    report_fetched_at
  FROM t
  FULL JOIN a
    USING (site, window_start, product_name, merchant_group_id)
) AS v
