// akview entry point: everything happens in run_cli.
#include "ui/cli.hpp"

int main(int argc, char** argv) { return akview::run_cli(argc, argv); }
