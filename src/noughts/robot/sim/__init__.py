"""Stand-ins for what is not here: simulators of the GRBL and EBB protocols, a fake EV3 sysfs
tree with physics, a simulated human and synthetic photos. Tests, benchmarks and newcomers use them."""
