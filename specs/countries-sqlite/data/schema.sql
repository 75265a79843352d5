CREATE TABLE countries (
  code TEXT PRIMARY KEY NOT NULL,      -- ISO 3166-1 alpha-3
  name TEXT NOT NULL,                  -- common English name
  official_name TEXT NOT NULL,
  region TEXT NOT NULL,
  subregion TEXT,
  capital TEXT,                        -- the first capital listed, if any
  area REAL,                           -- km²
  landlocked BOOLEAN NOT NULL,
  un_member BOOLEAN NOT NULL,
  latlng JSON                          -- [latitude, longitude]
);
CREATE TABLE borders (
  code TEXT NOT NULL REFERENCES countries (code),
  neighbour TEXT NOT NULL REFERENCES countries (code),
  PRIMARY KEY (code, neighbour)
);
CREATE TABLE languages (
  code TEXT NOT NULL REFERENCES countries (code),
  language TEXT NOT NULL,              -- ISO 639-3
  name TEXT NOT NULL,
  PRIMARY KEY (code, language)
);
CREATE INDEX languages_by_language ON languages (language);
