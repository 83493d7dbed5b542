// Package prefetch is the per-GPU asynchronous mini-batch pipeline: it
// schedules the batches of a sampler.Plan epoch after epoch without a
// pause, samples them with several samplers side by side, gathers each
// batch's input feature rows from the served partitions (local rows from
// memory, remote ones over the feature store's transport) into one host
// buffer, and copies them to a cuda.Device, each stage running ahead of
// the next by its own depth over bounded queues, so that a trainer taking
// batches with Loader.Next waits as little as possible.
//
// The device stage keeps each device buffer's rows from the batch it last
// held and copies only the rows of nodes it does not hold, into the rows
// of the nodes that left (Classify, a pure function over ID slices);
// rows then sit in slot order, and the batch says which slot holds which
// input node. A static cache of the highest in-degree nodes' rows can
// serve rows on the device too.
//
// Every stage that exchanges with other ranks has its own communicator and
// runs the same batches in the same order on every rank, so ranks at
// different speeds never deadlock; a trainer that stops early closes the
// pipeline collectively (Loader.Close), and an error in any stage on any
// rank is the whole job's.
package prefetch
