// Placeholder until the env benchmark lands.
