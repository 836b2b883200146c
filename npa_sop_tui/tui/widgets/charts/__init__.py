"""Charts drawn in text cells, alike in a terminal and in a browser (textual-serve):
the deploy timeline, node states over time, cost so far. They draw models from
`npa_sop_tui.history`; the HTML report draws the same models as SVG."""
