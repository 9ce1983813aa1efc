// Placeholder until the bf benchmark lands.
