// The shell's page logic: to come.
