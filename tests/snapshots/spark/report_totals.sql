WITH windows AS (
  SELECT
    site,
    'networks' AS dataset,
    slice,
    grain,
    start AS window_start,
    window_end,
    COUNT(*) AS row_count,
    CAST(SUM(revenue) AS DECIMAL(38, 4)) AS revenue,
    CAST(SUM(sales) AS DECIMAL(38, 4)) AS sales,
    SUM(clicks) AS clicks,
    SUM(actions) AS actions,
    MIN(total_revenue) AS reported_revenue,
    MIN(total_sales) AS reported_sales,
    MIN(total_clicks) AS reported_clicks,
    MIN(total_actions) AS reported_actions,
    MAX(fetched_at) AS fetched_at
  FROM (
    SELECT
      *
    FROM lake_networks
  )
  GROUP BY
    site,
    slice,
    grain,
    start,
    window_end
  UNION ALL
  SELECT
    site,
    'merchandise' AS dataset,
    slice,
    grain,
    start AS window_start,
    window_end,
    COUNT(*) AS row_count,
    CAST(SUM(revenue) AS DECIMAL(38, 4)) AS revenue,
    CAST(SUM(sales) AS DECIMAL(38, 4)) AS sales,
    CAST(NULL AS DOUBLE) AS clicks,
    SUM(actions) AS actions,
    MIN(total_revenue) AS reported_revenue,
    MIN(total_sales) AS reported_sales,
    CAST(NULL AS DOUBLE) AS reported_clicks,
    MIN(total_actions) AS reported_actions,
    MAX(fetched_at) AS fetched_at
  FROM (
    SELECT
      *
    FROM lake_merchandise
  )
  GROUP BY
    site,
    slice,
    grain,
    start,
    window_end
)
SELECT
  v.*,
  COALESCE(
    (
      UNIX_TIMESTAMP(v.fetched_at) >= (
        DATEDIFF(DAY, CAST('1970-01-01' AS DATE), v.window_end) + 2
      ) * 86400
    ),
    FALSE
  ) AS complete,
  COALESCE(
    (
      UNIX_TIMESTAMP(v.fetched_at) >= (
        DATEDIFF(DAY, CAST('1970-01-01' AS DATE), v.window_end) + (
          CASE v.site WHEN 'alpha' THEN 45 ELSE 45 END
        )
      ) * 86400
    ),
    FALSE
  ) AS final
FROM (
  SELECT
    site,
    dataset,
    slice,
    grain,
    window_start,
    window_end,
    row_count,
    revenue,
    reported_revenue,
    CAST(reported_revenue AS DECIMAL(38, 4)) - revenue AS revenue_difference,
    sales,
    reported_sales,
    CAST(reported_sales AS DECIMAL(38, 4)) - sales AS sales_difference,
    clicks,
    reported_clicks,
    reported_clicks - clicks AS clicks_difference,
    actions,
    reported_actions,
    reported_actions - actions AS actions_difference,
    fetched_at
  FROM windows
) AS v
