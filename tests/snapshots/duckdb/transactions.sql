SELECT site, commission_id, commission_date, update_date, click_date,
       account_id, campaign_id, campaign_name, revenue_id, order_value, publisher_net_revenue, program_type, click_id, cuid, link_utm_source, link_utm_medium, link_utm_campaign, link_utm_term, link_utm_content, page_utm_source, page_utm_medium, page_utm_campaign, page_utm_term, page_utm_content, page_url, link_url, coalesce(partner_product, 'Unknown') AS partner_product, partner_product_sub_type, country, merchant_group_id, merchant_group_name, network, products, extra,
       coalesce(device, 'Unknown') AS device, fetched_at,
       version_count, first_update_date, original_revenue, version_count > 1 AS adjusted,
       coalesce(publisher_net_revenue < 0 OR publisher_net_revenue < original_revenue
                OR order_value < original_order_value, false) AS returned
FROM live.transaction_versions
JOIN (  -- the latest version's partition, found on narrow rows: sorting whole rows costs 3x more
    SELECT site, commission_id, partition_by, partition_day,
           greatest(count(CASE WHEN partition_by = 'updateDate' THEN 1 END) OVER versions, 1)
               AS version_count,
           last_value(update_date) OVER versions AS first_update_date,
           last_value(publisher_net_revenue) OVER versions AS original_revenue,
           last_value(order_value) OVER versions AS original_order_value
    FROM live.transaction_versions
    WHERE commission_id IS NOT NULL
    WINDOW versions AS (PARTITION BY site, commission_id ORDER BY update_date DESC NULLS LAST, fetched_at DESC ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
    QUALIFY row_number() OVER (PARTITION BY site, commission_id ORDER BY update_date DESC NULLS LAST, fetched_at DESC) = 1
) AS latest USING (site, commission_id, partition_by, partition_day)
