"""Importers: turn a foreign description of an API into ordinary lynxc specs, so everything
downstream (build, lint, diff, changelog) treats imported tools like written ones."""
