-- the cities of one country
SELECT name
FROM cities
WHERE country = $country
GROUP BY
