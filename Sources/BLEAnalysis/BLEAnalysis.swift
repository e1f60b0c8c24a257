// Analyses over decoded frames: connection summaries, GATT trees, heart-rate series, and the
// statistics and plots they share. Pure: no I/O, never prints.
