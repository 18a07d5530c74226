"""TODO: what lives here."""
