-- Films of one rating, newest first.
SELECT title, release_year
FROM film
WHERE rating = $rating AND « lenght » > 90
ORDER BY release_year DESC;
