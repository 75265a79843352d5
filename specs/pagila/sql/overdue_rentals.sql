SELECT r.rental_id, r.rental_date AS rented_at,
       r.rental_date + f.rental_duration * interval '1 day' AS due_at,
       d.day - (r.rental_date + f.rental_duration * interval '1 day')::date AS days_overdue,
       f.film_id, f.title, f.replacement_cost, i.store_id,
       c.customer_id, c.first_name || ' ' || c.last_name AS customer_name, c.email, a.phone
FROM (SELECT coalesce($as_of::date, current_date) AS day) AS d
JOIN rental AS r ON r.return_date IS NULL
JOIN inventory AS i ON i.inventory_id = r.inventory_id
JOIN film AS f ON f.film_id = i.film_id
JOIN customer AS c ON c.customer_id = r.customer_id
JOIN address AS a ON a.address_id = c.address_id
WHERE (r.rental_date + f.rental_duration * interval '1 day')::date < d.day
  AND (i.store_id = $store_id OR $store_id IS NULL)
ORDER BY due_at, r.rental_id
LIMIT $limit
