SELECT
  v.*,
  COALESCE(
    (
      CASE v.site
        WHEN 'alpha'
        THEN (
          v.day >= CAST('2026-01-01' AS DATE) AND v.day < CAST('2026-03-11' AS DATE)
        )
        ELSE FALSE
      END
    ),
    FALSE
  ) AS complete,
  COALESCE(
    (
      CASE v.site
        WHEN 'alpha'
        THEN (
          v.day >= CAST('2026-01-01' AS DATE) AND v.day < CAST('2026-01-25' AS DATE)
        )
        ELSE FALSE
      END
    ),
    FALSE
  ) AS final
FROM (
  SELECT
    site,
    day,
    CAST(SUM(revenue) AS DECIMAL(38, 4)) AS revenue,
    CAST(SUM(order_value) AS DECIMAL(38, 4)) AS order_value,
    CAST(SUM(transactions) AS BIGINT) AS transactions,
    CAST(SUM(returns) AS BIGINT) AS returns,
    SUM(returns) / SUM(transactions) AS return_rate,
    CAST(SUM(adjusted) AS BIGINT) AS adjusted,
    COUNT(DISTINCT network) AS networks,
    COUNT(DISTINCT link_url) AS links
  FROM network_link_performance
  GROUP BY ALL
) AS v
