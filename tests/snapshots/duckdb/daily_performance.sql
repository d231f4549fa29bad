SELECT v.*, coalesce((CASE v.site WHEN 'alpha' THEN (v.day >= DATE '2026-01-01' AND v.day < DATE '2026-03-11') ELSE false END), false) AS complete, coalesce((CASE v.site WHEN 'alpha' THEN (v.day >= DATE '2026-01-01' AND v.day < DATE '2026-01-25') ELSE false END), false) AS final FROM (SELECT site, day, CAST(sum(revenue) AS DECIMAL(38, 4)) AS revenue, CAST(sum(order_value) AS DECIMAL(38, 4)) AS order_value,
    sum(transactions)::BIGINT AS transactions, sum(returns)::BIGINT AS returns,
    sum(returns) / sum(transactions) AS return_rate,
    sum(adjusted)::BIGINT AS adjusted,
    count(DISTINCT network) AS networks,
    count(DISTINCT link_url) AS links
FROM live.network_link_performance
GROUP BY ALL) AS v
