"""Reading the human's marks: ``camera`` (OpenCV), ``light`` (the seed's reflected-light sensor)
and ``keyboard`` (the human types the move)."""
