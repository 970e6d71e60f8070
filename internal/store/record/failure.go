package record

import "errors"

// A failure record is the metadata blob of a geometry output's disk-cache
// entry that has no parts: failureRecordVersion, then the error's text.
// Successful conversions are stored without a blob, so a blob on a
// geometry output's key always means a failure.
const failureRecordVersion = 1

// EncodeFailure is the failure record of a conversion that failed with
// err.
func EncodeFailure(err error) []byte {
	return append([]byte{failureRecordVersion}, err.Error()...)
}

// DecodeFailure returns the error a failure record holds, and false for a
// blob that is none.
func DecodeFailure(meta []byte) (error, bool) {
	if len(meta) < 1 || meta[0] != failureRecordVersion {
		return nil, false
	}
	return errors.New(string(meta[1:])), true
}
