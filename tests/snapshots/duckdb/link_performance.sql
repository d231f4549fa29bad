SELECT v.*, coalesce((CASE v.site WHEN 'alpha' THEN (v.day >= DATE '2026-01-01' AND v.day < DATE '2026-03-11') ELSE false END), false) AS complete, coalesce((CASE v.site WHEN 'alpha' THEN (v.day >= DATE '2026-01-01' AND v.day < DATE '2026-01-25') ELSE false END), false) AS final FROM (SELECT site, commission_date AS day, link_url, page_url, cuid, link_utm_source, link_utm_medium, link_utm_campaign, link_utm_term, link_utm_content, page_utm_source, page_utm_medium, page_utm_campaign, page_utm_term, page_utm_content,
    CAST(sum(publisher_net_revenue) AS DECIMAL(38, 4)) AS revenue,
    CAST(sum(order_value) AS DECIMAL(38, 4)) AS order_value,
    count(*) AS transactions,
    count(*) FILTER (WHERE returned) AS returns,
    count(*) FILTER (WHERE returned) / count(*) AS return_rate
FROM live.transactions
GROUP BY ALL) AS v
