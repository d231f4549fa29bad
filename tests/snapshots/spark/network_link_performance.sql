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
    commission_date AS day,
    network,
    merchant_group_name,
    link_url,
    CAST(SUM(publisher_net_revenue) AS DECIMAL(38, 4)) AS revenue,
    CAST(SUM(order_value) AS DECIMAL(38, 4)) AS order_value,
    COUNT(*) AS transactions,
    COUNT(*) FILTER(WHERE
      returned) AS returns,
    COUNT(*) FILTER(WHERE
      returned) / COUNT(*) AS return_rate,
    COUNT(*) FILTER(WHERE
      adjusted) AS adjusted
  FROM transactions
  GROUP BY ALL
) AS v
