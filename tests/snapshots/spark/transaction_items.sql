SELECT
  site,
  commission_id,
  commission_date,
  click_date,
  network,
  merchant_group_id,
  merchant_group_name,
  device,
  country,
  returned,
  item.product_id,
  item.product_name,
  item.price,
  item.quantity,
  COALESCE(CAST(item.price AS DOUBLE) * item.quantity / NULLIF(items_value, 0), 1 / n_items) AS share,
  CAST(CAST(ROUND((
    publisher_net_revenue * share
  ) * 10000) AS DECIMAL(18, 0)) * 0.0001 AS DECIMAL(18, 4)) AS revenue,
  CAST(CAST(ROUND((
    order_value * share
  ) * 10000) AS DECIMAL(18, 0)) * 0.0001 AS DECIMAL(18, 4)) AS order_value
FROM (
  SELECT
    *,
    EXPLODE(products) AS item,
    SIZE(products) AS n_items, /* len() is a string's on Spark */
    AGGREGATE(
      TRANSFORM(products, p -> CAST(p.price AS DOUBLE) * p.quantity),
      CAST(NULL AS DOUBLE),
      (acc, v) -> CASE WHEN v IS NULL THEN acc ELSE COALESCE(acc, CAST(0 AS DOUBLE)) + v END
    ) AS items_value
  FROM transactions
  WHERE
    SIZE(products) > 0
)
