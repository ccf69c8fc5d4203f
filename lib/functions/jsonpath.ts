// (in progress) registers the jsonpath functions
