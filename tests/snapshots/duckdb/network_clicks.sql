SELECT v.*, coalesce((epoch(v.fetched_at) >= (date_diff('day', DATE '1970-01-01', v.window_end) + 2) * 86400), false) AS complete, coalesce((epoch(v.fetched_at) >= (date_diff('day', DATE '1970-01-01', v.window_end) + (CASE v.site WHEN 'alpha' THEN 45 ELSE 45 END)) * 86400), false) AS final FROM (SELECT site, window_start, window_end, grain, slice, fetched_at, network_name, device_type,
       country, sum(clicks) AS clicks
FROM live.networks
GROUP BY ALL) AS v
