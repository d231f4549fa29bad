"""Charts: offline map data, the house theme and offline rendering."""
