-- windows line endings and tabs
SELECT name
FROM cities
WHERE country = $country AND		nosuch = 1
