"""scheduler: coming in a later issue (see README's course map)."""
