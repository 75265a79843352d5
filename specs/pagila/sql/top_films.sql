SELECT f.film_id, f.title, f.rating,
       count(*) AS rentals,
       count(DISTINCT r.customer_id) AS customers,
       max(r.rental_date) AS last_rented_at
FROM rental AS r
JOIN inventory AS i ON i.inventory_id = r.inventory_id
JOIN film AS f ON f.film_id = i.film_id
WHERE r.rental_date >= $from::date
  AND r.rental_date < $until::date
  AND (i.store_id = $store_id OR $store_id IS NULL)
GROUP BY f.film_id
ORDER BY rentals DESC, f.film_id
LIMIT $limit
