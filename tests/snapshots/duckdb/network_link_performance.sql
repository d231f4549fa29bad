SELECT v.*, coalesce((CASE v.site WHEN 'alpha' THEN (v.day >= DATE '2026-01-01' AND v.day < DATE '2026-03-11') ELSE false END), false) AS complete, coalesce((CASE v.site WHEN 'alpha' THEN (v.day >= DATE '2026-01-01' AND v.day < DATE '2026-01-25') ELSE false END), false) AS final FROM (SELECT site, commission_date AS day, network, merchant_group_name, link_url,
    CAST(sum(publisher_net_revenue) AS DECIMAL(38, 4)) AS revenue,
    CAST(sum(order_value) AS DECIMAL(38, 4)) AS order_value,
    count(*) AS transactions,
    count(*) FILTER (WHERE returned) AS returns,
    count(*) FILTER (WHERE returned) / count(*) AS return_rate,
    count(*) FILTER (WHERE adjusted) AS adjusted
FROM live.transactions
GROUP BY ALL) AS v
