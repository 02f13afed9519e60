3
$loop:/dev/shm/kyber-shm-cvhi7pbt.imgloop0none