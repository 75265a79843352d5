SELECT r.rental_id, r.rental_date AS rented_at, r.return_date AS returned_at,
       r.rental_date + f.rental_duration * interval '1 day' AS due_at,
       f.film_id, f.title, i.store_id,
       p.amount_paid
FROM rental AS r
JOIN inventory AS i ON i.inventory_id = r.inventory_id
JOIN film AS f ON f.film_id = i.film_id
LEFT JOIN (
  SELECT pay.rental_id, sum(pay.amount) AS amount_paid
  FROM payment AS pay
  WHERE pay.customer_id = $customer_id
  GROUP BY pay.rental_id
) AS p ON p.rental_id = r.rental_id
WHERE r.customer_id = $customer_id
  AND (r.rental_date >= $since OR $since IS NULL)
  AND (NOT $only_out OR r.return_date IS NULL)
ORDER BY r.rental_date DESC, r.rental_id DESC
LIMIT $limit
