thing = 2
