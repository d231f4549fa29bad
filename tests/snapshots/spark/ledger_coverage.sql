SELECT
  site,
  first_day,
  last_day,
  last_fetched_at
FROM (
  SELECT
    CAST('alpha' AS STRING) AS site,
    CAST('2026-01-01' AS DATE) AS first_day,
    CAST('2026-03-12' AS DATE) AS last_day,
    CAST('2026-03-12T06:30:00+00:00' AS TIMESTAMP) AS last_fetched_at
)
