"""What happened, as data for pictures: an operation's timeline (from its NDJSON event
log), node states over time (from status snapshots) and cost so far. No Textual here: the
app's chart widgets and the HTML report draw from the same models."""
