SELECT a.actor_id, a.first_name, a.last_name,
       count(f.film_id) AS film_count,
       coalesce(array_agg(f.title ORDER BY f.title) FILTER (WHERE f.film_id IS NOT NULL), '{}') AS titles,
       coalesce((SELECT array_agg(DISTINCT c.name ORDER BY c.name)
                 FROM film_actor AS fa2
                 JOIN film_category AS fc ON fc.film_id = fa2.film_id
                 JOIN category AS c ON c.category_id = fc.category_id
                 WHERE fa2.actor_id = a.actor_id), '{}') AS categories,
       min(f.release_year) AS first_year,
       max(f.release_year) AS last_year
FROM actor AS a
LEFT JOIN film_actor AS fa ON fa.actor_id = a.actor_id
LEFT JOIN film AS f ON f.film_id = fa.film_id
WHERE (a.actor_id = $actor_id OR $actor_id IS NULL)
  AND (a.first_name ILIKE '%' || $name || '%' OR a.last_name ILIKE '%' || $name || '%' OR $name IS NULL)
GROUP BY a.actor_id
ORDER BY a.last_name, a.first_name, a.actor_id
LIMIT $limit
