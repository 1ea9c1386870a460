"""Model backends behind one interface, chosen by a model spec string."""
