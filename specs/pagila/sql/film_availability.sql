WITH copies AS (
  SELECT i.inventory_id, i.store_id,
         EXISTS (SELECT 1 FROM rental AS r
                 WHERE r.inventory_id = i.inventory_id AND r.return_date IS NULL) AS rented_out
  FROM inventory AS i
  WHERE i.film_id = $film_id
    AND (i.store_id = $store_id OR $store_id IS NULL)
)
SELECT c.store_id, f.film_id, f.title,
       count(*) AS copies,
       count(*) FILTER (WHERE c.rented_out) AS rented_out,
       count(*) FILTER (WHERE NOT c.rented_out) AS in_stock,
       coalesce(array_agg(c.inventory_id ORDER BY c.inventory_id) FILTER (WHERE NOT c.rented_out),
                '{}') AS in_stock_copies
FROM copies AS c
JOIN film AS f ON f.film_id = $film_id
GROUP BY c.store_id, f.film_id, f.title
ORDER BY c.store_id
