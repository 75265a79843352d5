SELECT r.rental_id, r.rental_date AS rented_at, r.return_date AS returned_at,
       r.rental_date + f.rental_duration * interval '1 day' AS due_at,
       CASE WHEN r.return_date IS NOT NULL THEN 'returned'
            WHEN r.rental_date + f.rental_duration * interval '1 day' < now() THEN 'overdue'
            ELSE 'out' END AS status,
       f.film_id, f.title, f.rating, f.rental_rate, f.replacement_cost,
       i.inventory_id, i.store_id,
       c.customer_id, c.first_name || ' ' || c.last_name AS customer_name, c.email,
       s.first_name || ' ' || s.last_name AS staff_name
FROM rental AS r
JOIN inventory AS i ON i.inventory_id = r.inventory_id
JOIN film AS f ON f.film_id = i.film_id
JOIN customer AS c ON c.customer_id = r.customer_id
JOIN staff AS s ON s.staff_id = r.staff_id
WHERE r.rental_id = $rental_id
