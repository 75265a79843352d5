SELECT f.film_id, f.title, f.description, f.release_year, f.rating, f.length,
       f.rental_rate, f.special_features,
       ts_rank(f.fulltext, q.query) AS rank
FROM film AS f,
     websearch_to_tsquery('english', $query) AS q(query)
WHERE f.fulltext @@ q.query
  AND (f.rating = $rating OR $rating IS NULL)
  AND ($feature = ANY (f.special_features) OR $feature IS NULL)
  AND (f.length <= $max_length OR $max_length IS NULL)
ORDER BY rank DESC, f.film_id
LIMIT $limit
