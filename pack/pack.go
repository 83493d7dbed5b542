package pack

// Pack packs the graphs of h under the options: by default with our packer,
// limits equal to the dataset's largest graph (nodes and edges separately)
// and at most 256 graphs per pack. It fails when an option is invalid or a
// graph of h does not fit the limits. The packing it returns is valid (see
// Packing.Validate).
func Pack(h Histogram, opts ...Option) (Packing, error) {
	o, err := resolve(h, opts)
	if err != nil {
		return Packing{}, err
	}
	if err := o.limits.checkFits(h); err != nil {
		return Packing{}, err
	}
	p := Packing{Limits: o.limits, Algo: o.algo, Heuristic: o.heuristic, Order: o.order, Effort: o.effort}
	if o.algo == Reference {
		p.Groups = packReference(h, o)
	} else {
		p.Groups = packOurs(h, o.limits, o.effort)
	}
	return p, nil
}
