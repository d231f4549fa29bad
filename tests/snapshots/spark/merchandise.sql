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
    start AS window_start,
    window_end,
    product_name,
    merchant_group_name,
    merchant_group_id,
    revenue,
    sales,
    actions,
    totals,
    campaign_ids,
    merchant_group_ids,
    program_type,
    partner_product,
    device_type,
    country,
    sub_ids,
    cuids,
    page_utm_source,
    page_utm_medium,
    page_utm_campaign,
    page_utm_term,
    page_utm_content,
    link_utm_source,
    link_utm_medium,
    link_utm_campaign,
    link_utm_term,
    link_utm_content,
    extra,
    grain,
    slice,
    fetched_at
  FROM (
    SELECT
      *
    FROM lake_merchandise
  )
) AS v
