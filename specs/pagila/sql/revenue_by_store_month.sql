SELECT st.store_id,
       date_trunc('month', p.payment_date, 'UTC')::date AS month,
       count(*) AS payments,
       count(DISTINCT p.customer_id) AS customers,
       sum(p.amount) AS revenue,
       round(avg(p.amount), 2) AS mean_payment
FROM payment AS p
JOIN staff AS st ON st.staff_id = p.staff_id
WHERE p.payment_date >= $from::date
  AND p.payment_date < $until::date
  AND (st.store_id = $store_id OR $store_id IS NULL)
GROUP BY st.store_id, month
ORDER BY month, st.store_id
