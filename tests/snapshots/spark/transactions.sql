SELECT
  site,
  commission_id,
  commission_date,
  update_date,
  click_date,
  account_id,
  campaign_id,
  campaign_name,
  revenue_id,
  order_value,
  publisher_net_revenue,
  program_type,
  click_id,
  cuid,
  link_utm_source,
  link_utm_medium,
  link_utm_campaign,
  link_utm_term,
  link_utm_content,
  page_utm_source,
  page_utm_medium,
  page_utm_campaign,
  page_utm_term,
  page_utm_content,
  page_url,
  link_url,
  COALESCE(partner_product, 'Unknown') AS partner_product,
  partner_product_sub_type,
  country,
  merchant_group_id,
  merchant_group_name,
  network,
  products,
  extra,
  COALESCE(device, 'Unknown') AS device,
  fetched_at,
  version_count,
  first_update_date,
  original_revenue,
  version_count > 1 AS adjusted,
  COALESCE(
    publisher_net_revenue < 0
    OR publisher_net_revenue < original_revenue
    OR order_value < original_order_value,
    FALSE
  ) AS returned
FROM transaction_versions
JOIN (
  /* the latest version's partition, found on narrow rows: sorting whole rows costs 3x more */
  SELECT
    site,
    commission_id,
    partition_by,
    partition_day,
    version_count,
    first_update_date,
    original_revenue,
    original_order_value
  FROM (
    /* the latest version's partition, found on narrow rows: sorting whole rows costs 3x more */
    SELECT
      site,
      commission_id,
      partition_by,
      partition_day,
      GREATEST(COUNT(CASE WHEN partition_by = 'updateDate' THEN 1 END) OVER versions, 1) AS version_count,
      LAST_VALUE(update_date) OVER versions AS first_update_date,
      LAST_VALUE(publisher_net_revenue) OVER versions AS original_revenue,
      LAST_VALUE(order_value) OVER versions AS original_order_value,
      ROW_NUMBER() OVER (PARTITION BY site, commission_id ORDER BY update_date DESC, fetched_at DESC) AS _w
    FROM transaction_versions
    WHERE
      NOT commission_id IS NULL
    WINDOW versions AS (
      PARTITION BY site, commission_id
      ORDER BY update_date DESC, fetched_at DESC
      ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
    )
  ) AS _t
  WHERE
    _w = 1
) AS latest
  USING (site, commission_id, partition_by, partition_day)
