SELECT site, commission_id, commission_date, click_date, network, merchant_group_id,
       merchant_group_name, device, country, returned, item.product_id, item.product_name,
       item.price, item.quantity,
       coalesce(CAST(item.price AS DOUBLE) * item.quantity / nullif(items_value, 0), 1 / n_items) AS share,
       CAST(CAST(round((publisher_net_revenue * share) * 10000) AS DECIMAL(18, 0)) * 0.0001 AS DECIMAL(18,4)) AS revenue,
       CAST(CAST(round((order_value * share) * 10000) AS DECIMAL(18, 0)) * 0.0001 AS DECIMAL(18,4)) AS order_value
FROM (
    SELECT *, unnest(products) AS item, array_length(products) AS n_items,  -- len() is a string's on Spark
           list_sum(list_transform(products, lambda p: CAST(p.price AS DOUBLE) * p.quantity)) AS items_value
    FROM live.transactions
    WHERE array_length(products) > 0
)
