// Placeholder until the ring benchmark lands.
