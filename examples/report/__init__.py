"""The `report` python source of the meeting-report example."""
