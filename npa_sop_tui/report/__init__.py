"""`npa soperator report`: one cluster's last operation as a self-contained HTML page."""
