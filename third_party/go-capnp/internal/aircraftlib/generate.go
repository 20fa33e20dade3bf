package aircraftlib

//go:generate capnp compile -I ../../std -ogo aircraft.capnp
