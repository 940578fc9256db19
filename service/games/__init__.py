"""What the service knows of each game, one package per game (its request and response schemas,
its terminal replay view), and the registry that names the games the API serves."""
