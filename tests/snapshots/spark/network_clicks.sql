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
    window_start,
    window_end,
    grain,
    slice,
    fetched_at,
    network_name,
    device_type,
    country,
    SUM(clicks) AS clicks
  FROM networks
  GROUP BY ALL
) AS v
